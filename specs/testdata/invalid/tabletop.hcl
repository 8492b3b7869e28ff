# The tabletop suites' settings: unknown values name the valid ones.
experiment "tabletop_bad" {
  budget { env_steps = 1000 }
  env "tabletop" {
    suite      = "kitchen"           # ERROR: Unsupported value
    image_size = 100                 # ERROR: Unsupported image size
    cameras    = ["agentview", "top"] # ERROR: Unsupported value
  }
  policy { action = "tokens" }

  ablation "both" {
    env "tabletop" {
      task  = 1
      tasks = [1, 2]                 # ERROR: Conflicting arguments
    }
  }
  ablation "classic" {
    env "cartpole" {
      suite = "spatial"              # ERROR: Unsupported argument
    }
    policy { action = "categorical" }
  }
}
