# What behaviour cloning and action chunks need from the rest of an arm.
experiment "pretrain_cross" {
  budget { env_steps = 4096 }
  env "tabletop" {
    suite = "spatial"
  }
  policy {
    action        = "gaussian"
    action_chunk  = 4
    execute_steps = 6                # ERROR: More executed steps than the chunk holds
  }
  pretrain {
    demos_per_task = 5
  }

  ablation "tokens" {
    policy {
      action        = "tokens"       # ERROR: Behaviour cloning needs the gaussian head
      execute_steps = 2
      action_chunk  = 8              # ERROR: Action chunks need the gaussian head
    }
  }
  ablation "classic" {
    env "pendulum" {}
    policy { execute_steps = 2 }
    pretrain { epochs = 2 }          # ERROR: Behaviour cloning needs a tabletop suite
  }
  ablation "shifted" {
    pretrain { shift = 2 }           # ERROR: Image augmentation without images
  }
  ablation "soft" {
    pretrain { label_sigma = 3 }     # ERROR: Soft labels without action tokens
  }
  ablation "state_wm" {
    policy { execute_steps = 2 }
    pretrain { epochs = 2 }          # ERROR: Behaviour cloning with a state-vector world model
    world_model {
      enabled = true
      reward  = "direct"
    }
  }
  ablation "scratch" {
    pretrain { enabled = false }     # no error: RL from scratch
    policy { execute_steps = 2 }
  }
}
