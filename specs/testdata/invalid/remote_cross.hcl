# A remote arm cannot inherit a simulated latency from a local base.
experiment "remote_inherits" {
  budget { env_steps = 1000 }
  env "cartpole" {
    latency { kind = "constant" }
  }
  ablation "latency" {
    env "remote" {
      world   = "cartpole"                # ERROR: Simulated latency on a remote env
      address = "127.0.0.1:7000"
    }
  }
}
