# Arm names, labels and the baseline.
experiment "arms" {
  baseline = "control"         # ERROR: Unknown baseline arm

  budget { env_steps = 1000 }
  env "cartpole" {}

  ablation "sync" {
    pipeline { mode = "sync" }
  }
  ablation "sync" {            # ERROR: Duplicate arm name
    pipeline { workers = 2 }
  }
  ablation "base" {            # ERROR: Duplicate arm name
    policy { hidden = [8] }
  }
  ablation "a/b" {             # ERROR: Invalid arm name
  }
  ablation "other_env" {
    env "cartpol" {}           # ERROR: Unknown environment kind
  }
  ablation "other_algo" {
    algorithm "dqn" {}         # ERROR: Unknown algorithm
  }
  ablation "seeded" {
    seeds = [3]                # ERROR: Unsupported argument
  }
}
