# References to variables that do not exist.
variable "steps" {
  default = 1000
}

experiment "refs" {
  budget {
    env_steps = var.stepz      # ERROR: Reference to undeclared variable
  }
  env "cartpole" {}
  pipeline {
    workers = local.workers    # ERROR: Unsupported reference
  }
}
