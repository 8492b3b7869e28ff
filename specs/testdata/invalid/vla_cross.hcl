# What the micro-VLA policy needs from the rest of an arm.
experiment "vla_cross" {
  budget { env_steps = 4096 }
  env "tabletop" {
    suite      = "spatial"
    image_size = 32
    pixels     = true
  }
  policy {
    action = "tokens"
    vla {
      dim   = 64
      heads = 3                      # ERROR: Attention heads do not divide the width
      patch = 5                      # ERROR: Patches do not tile the image
    }
  }

  ablation "gaussian" {
    policy {
      action = "gaussian"
      vla {                          # ERROR: The VLA policy writes action tokens
        heads = 2
        patch = 8
      }
    }
  }
  ablation "state" {
    env "tabletop" {
      pixels = false
    }
    policy {
      vla {                          # ERROR: The VLA policy needs camera frames
        heads = 4
        patch = 8
      }
    }
  }
  ablation "ok" {
    policy {
      vla {                          # no error: 4 heads of 16, 8×8 patches of 32×32
        heads = 4
        patch = 8
      }
    }
  }
}
