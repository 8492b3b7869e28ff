# A syntax error stops decoding: nothing else in this file is reported.
experiment "broken" {
  seeds = [1, 2
  budget { env_steps = 1000 } # ERROR: Missing item separator
  env "cartpole" {}
}
