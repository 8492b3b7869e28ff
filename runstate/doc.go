// Package runstate is a training run's state machine: its counters ([Counters]), what it
// remembers between segments ([State]: counters, latest checkpoint, the imagination-horizon
// schedule's state, the budget), and the pure functions that plan the next segment
// ([Machine.Next]) and fold a finished segment's result in ([Machine.Apply]).
//
// It imports only specs and the standard library, so that the Run workflow (which must stay
// deterministic and thin) and the benches (which train in-process) drive the very same
// logic: one training path. The workflow adds durability (activities, signals,
// continue-as-new); this package decides what each segment does.
//
// A run's life:
//
//	st := m.Start(st, now)                  // record the start; H = horizon.start
//	if m.NeedsPretrain(st) { … st = m.ApplyPretrain(st, p) }
//	for !m.Done(st, now) {
//		seg := m.Next(st)                  // segment number, updates, horizon, …
//		res := <train seg>                 // activities.Trainer.TrainSegment
//		st = m.Apply(st, res)
//	}
//
// The horizon schedule ([HorizonSchedule]) raises the world model's imagination horizon H
// from horizon.start towards horizon.end as the observation model's validation loss on
// fresh real data falls; it lives here, in the run's state, so that it survives crashes.
package runstate
