variable "steps" { # ERROR: Missing experiment block
  default = 100
}
