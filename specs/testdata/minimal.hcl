experiment "minimal" {
  budget { env_steps = 5000 }
  env "cartpole" {}
}
