# Constraints between world_model attributes, checked per resolved arm.
experiment "wm_cross" {
  budget { env_steps = 1000 }
  env "pendulum" {}
  policy { action = "tokens" }

  world_model {
    horizon {
      start = 60                       # ERROR: Horizon start after end
      end   = 50
    }
  }

  # Inherits the base's horizon conflict (reported once, above) and adds
  # its own: thresholds out of order.
  ablation "thresholds" {
    world_model {
      horizon {
        loss_low = 0.9                 # ERROR: Horizon loss thresholds out of order
      }
    }
  }

  # Pendulum never succeeds, so success_delta has nothing to learn from.
  ablation "success" {
    world_model {
      enabled = true
      reward  = "success_delta"        # ERROR: No success signal
    }
  }

  # The world model reads state vectors, not frames.
  ablation "pixels" {
    env "tabletop" {
      pixels = true                    # ERROR: World model over pixels
    }
    policy { action = "tokens" }
    world_model {
      enabled = true
      reward  = "direct"
    }
  }
}
