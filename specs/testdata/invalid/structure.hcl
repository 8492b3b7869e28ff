# Missing and repeated blocks, and names that are not allowed.
experiment "bad structure" { # ERROR: Invalid experiment name
  seeds = []                   # ERROR: Empty seed list

  budget {                     # ERROR: Missing required argument
    wall_time = "1h"
  }

  env "acrobot" {}

  policy {
    hidden = [64, 64]
  }
  policy {                     # ERROR: Duplicate policy block
    hidden = [32]
  }

  pipeline {
    inference { max_batch = 8 }
    inference { max_batch = 16 } # ERROR: Duplicate inference block
    warmup = 10                  # ERROR: Unsupported argument
  }

  trainer {                    # ERROR: Unsupported block type
    ranks = 2
  }
}

