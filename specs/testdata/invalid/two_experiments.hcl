# One file, one experiment; unknown top-level blocks are rejected too.
experiment "first" {
  budget { env_steps = 10 }
  env "cartpole" {}
}

experiment "second" {          # ERROR: Duplicate experiment block
  budget { env_steps = 10 }
  env "cartpole" {}
}

locals {                       # ERROR: Unsupported block type
  workers = 4
}
