# Every world_model attribute here is out of range, of the wrong type or
# not an allowed value.
experiment "wm_values" {
  budget { env_steps = 1000 }
  env "cartpole" {}

  world_model {
    enabled              = "yes"       # ERROR: Incorrect attribute value type
    offline_trajectories = -1          # ERROR: Value out of range
    behaviour            = "expert"    # ERROR: Unsupported value
    history              = 0           # ERROR: Value out of range
    obs_hidden           = [128, 0]    # ERROR: Value out of range
    rew_hidden           = []          # ERROR: Empty list
    obs_learning_rate    = 0           # ERROR: Value out of range
    rew_learning_rate    = -1e-3       # ERROR: Value out of range
    reward               = "sparse"    # ERROR: Unsupported value
    pretrain_epochs      = 0           # ERROR: Value out of range
    imagination_ratio    = 1           # ERROR: Value out of range
    obs_every            = 2.5         # ERROR: Whole number required
    rew_every            = 0           # ERROR: Value out of range
    horizon {
      start     = 0                    # ERROR: Value out of range
      end       = 0                    # ERROR: Value out of range
      loss_high = 0                    # ERROR: Value out of range
      loss_low  = -0.1                 # ERROR: Value out of range
      slope     = 2                    # ERROR: Unsupported argument
    }
    pixels {
      group       = -1                 # ERROR: Value out of range
      temperature = 11                 # ERROR: Value out of range
    }
  }

  ablation "twice" {
    world_model { enabled = true }
    world_model { enabled = false }    # ERROR: Duplicate world_model block
  }
}
