# The pretrain block's values out of range.
experiment "pretrain_bad" {
  budget { env_steps = 4096 }
  env "tabletop" {
    suite = "spatial"
  }
  policy {
    action       = "gaussian"
    action_chunk = 100               # ERROR: Value out of range
  }
  pretrain {
    demos_per_task = 0               # ERROR: Value out of range
    noise          = 2               # ERROR: Value out of range
  }
}
