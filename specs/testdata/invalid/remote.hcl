# Remote environments: bad addresses, unknown worlds and settings name what is valid.
experiment "remote_bad" {
  budget { env_steps = 1000 }
  env "cartpole" {}

  ablation "one" {
    env "remote" {
      address = "localhost"               # ERROR: Invalid address
      world   = "cartpole"
    }
  }
  ablation "world" {
    env "remote" {
      address = "127.0.0.1:7000"
      world   = "libero"                  # ERROR: Unsupported value
    }
  }
  ablation "list" {
    env "remote" {
      world     = "cartpole"
      addresses = ["127.0.0.1:7000", "sim:99999"] # ERROR: Invalid address
    }
  }
  ablation "both" {
    env "remote" {
      world     = "cartpole"
      address   = "127.0.0.1:7000"
      addresses = ["127.0.0.1:7001"]      # ERROR: Conflicting arguments
    }
  }
  ablation "settings" {
    env "remote" {
      world    = "tabletop"
      address  = "127.0.0.1:7000"
      settings = {
        suite  = "kitchen"                # ERROR: Unsupported value
        colour = "red"                    # ERROR: Unsupported setting
      }
    }
    policy { action = "tokens" }
  }
  ablation "classic_settings" {
    env "remote" {
      world    = "cartpole"
      address  = "127.0.0.1:7000"
      settings = { suite = "spatial" }    # ERROR: Unsupported setting
      latency { kind = "constant" }       # ERROR: Unsupported block type
    }
  }
  ablation "no_world" {
    env "remote" {                        # ERROR: Missing world
      address = "127.0.0.1:7000"
    }
  }
  ablation "no_address" {
    env "remote" {                        # ERROR: Missing address
      world = "cartpole"
    }
  }
}
