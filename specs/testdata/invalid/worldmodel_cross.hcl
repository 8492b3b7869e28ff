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
      pixels = true                    # ERROR: State-vector world model on a pixel env
    }
    policy { action = "tokens" }
    world_model {
      enabled = true
      reward  = "direct"
    }
  }

  # The pixel world model reads the tabletop cameras, which pendulum has not.
  ablation "pixel_wm_pendulum" {
    world_model {
      enabled           = true
      imagination_ratio = 0
      pixels {}                        # ERROR: Pixel world model without camera frames
    }
  }

  # Imagined frames are for the VLA, in sync mode.
  ablation "pixel_wm_imagines" {
    env "tabletop" {
      pixels = true
    }
    policy { action = "tokens" }
    world_model {
      enabled           = true
      imagination_ratio = 0.25         # ERROR: Imagined training over pixels needs the VLA in sync mode
      pixels {}
    }
  }

  # Online fits run during imagined training only.
  ablation "pixel_wm_fits_idle" {
    env "tabletop" {
      pixels = true
    }
    policy { action = "tokens" }
    world_model {
      enabled           = true
      imagination_ratio = 0
      pixels {                         # ERROR: Online fits without imagined training
        obs_fit_steps = 4
      }
    }
  }

  # Only the pixel world model's collector has the scripted expert.
  ablation "state_wm_expert" {
    world_model {
      enabled   = true
      behaviour = "expert_noisy"       # ERROR: No expert for the state-vector world model
    }
  }

  # One held-out episode in ten needs ten episodes.
  ablation "pixel_wm_few" {
    env "tabletop" {
      pixels = true
    }
    policy { action = "tokens" }
    world_model {
      enabled              = true
      imagination_ratio    = 0
      offline_trajectories = 5         # ERROR: Too few offline episodes
      pixels {}
    }
  }

  # GRPO compares imagined rollouts only within groups of a start.
  ablation "pixel_wm_grpo_single" {
    env "tabletop" {
      pixels = true
    }
    pipeline { mode = "sync" }
    policy {
      action = "tokens"
      vla {}
    }
    algorithm "ppo" {
      adv_estimator = "grpo"           # ERROR: GRPO advantages with single imagined rollouts
    }
    world_model {
      enabled           = true
      imagination_ratio = 0.5
      pixels {}
    }
  }

  # Imagined groups are for GRPO.
  ablation "pixel_wm_group_gae" {
    env "tabletop" {
      pixels = true
    }
    pipeline { mode = "sync" }
    policy {
      action = "tokens"
      vla {}
    }
    world_model {
      enabled           = true
      imagination_ratio = 0.5
      pixels {                         # ERROR: Imagined groups without GRPO on imagined rollouts
        group = 8
      }
    }
  }

  # The imagined sampling temperature samples imagined actions only.
  ablation "pixel_wm_temperature_idle" {
    env "tabletop" {
      pixels = true
    }
    policy { action = "tokens" }
    world_model {
      enabled           = true
      imagination_ratio = 0
      pixels {                         # ERROR: Imagined sampling temperature without imagined training
        temperature = 0.3
      }
    }
  }

  # Graded outcomes rank the rollouts of a start against each other: they need a group.
  ablation "pixel_wm_graded_alone" {
    env "tabletop" {
      pixels = true
    }
    policy { action = "tokens" }
    world_model {
      enabled           = true
      imagination_ratio = 0
      pixels {                         # ERROR: Graded imagined outcomes without imagined groups
        graded = true
      }
    }
  }

  # No error: GRPO over groups of 8 imagined rollouts per start, imagined actions
  # sampled at temperature 0.3, graded by M_rew's p_success change.
  ablation "pixel_wm_grpo_groups" {
    env "tabletop" {
      pixels = true
    }
    pipeline { mode = "sync" }
    policy {
      action = "tokens"
      vla {}
    }
    algorithm "ppo" {
      adv_estimator = "grpo"
    }
    world_model {
      enabled           = true
      imagination_ratio = 0.5
      pixels {
        group       = 8
        temperature = 0.3
        graded      = true
      }
    }
  }
}
