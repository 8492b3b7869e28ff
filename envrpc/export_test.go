package envrpc

import "time"

// MeterStep records a Step round trip of d in m, for tests.
func MeterStep(m *Meter, d time.Duration) { m.step(d) }
