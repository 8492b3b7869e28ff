# Without budget and env blocks there is nothing to run.
experiment "empty" { # ERROR: Missing budget block # ERROR: Missing env block
  seeds = [1]
}
