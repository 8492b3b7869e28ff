# Every attribute here has a wrong type, range, enum value or duration.
experiment "values" {
  seeds        = [1, 2, -3, 2] # ERROR: Invalid seed # ERROR: Duplicate seed
  max_parallel = 0             # ERROR: Value out of range

  budget {
    env_steps = "lots"         # ERROR: Incorrect attribute value type
    wall_time = "30 minutes"   # ERROR: Invalid duration
  }

  env "cartpole" {
    max_episode_steps = 2.5    # ERROR: Whole number required
    latency {
      kind          = "gamma"  # ERROR: Unsupported value
      slow_fraction = 1.5      # ERROR: Value out of range
      slow_factor   = 0.5      # ERROR: Value out of range
    }
  }

  policy {
    action     = "beta"        # ERROR: Unsupported value
    hidden     = [64, 0]       # ERROR: Value out of range
    activation = relu          # ERROR: Unsupported reference
    bins       = 1             # ERROR: Value out of range
  }

  algorithm "ppo" {
    learning_rate = 0          # ERROR: Value out of range
    anneal_lr     = "maybe"    # ERROR: Incorrect attribute value type
    gamma         = 1.01       # ERROR: Value out of range
    gae_lambda    = -0.1       # ERROR: Value out of range
    epochs        = null       # ERROR: Null value not allowed
    advantage_norm = "layer"   # ERROR: Unsupported value
  }

  pipeline {
    mode    = "turbo"          # ERROR: Unsupported value
    workers = "four"           # ERROR: Incorrect attribute value type
    lag     = -1               # ERROR: Value out of range
    inference {
      max_wait = "0s"          # ERROR: Value out of range
    }
  }

  checkpoint {
    keep = 0                   # ERROR: Value out of range
  }
}
