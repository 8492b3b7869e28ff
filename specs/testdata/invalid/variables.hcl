# Variable declarations are checked before anything else is decoded.
variable "steps" {
  default = 1000
}
variable "steps" {             # ERROR: Duplicate variable declaration
  default = 2000
}
variable "lr" {                # ERROR: Missing value for variable
  description = "learning rate, given with -var lr=..."
}
variable "doubled" {
  default = var.steps          # ERROR: Variables not allowed
}

experiment "vars" {
  budget { env_steps = var.steps }
  env "cartpole" {}
}
