// Package worker hosts accerl's Temporal side: the embedded Temporal server (a full
// frontend/history/matching/worker server in this process, persisted to a SQLite file under
// the state directory) and the Temporal worker that runs accerl's workflows and activities.
//
// `accerl run` without --temporal starts both in one process. `accerl server` runs only the
// server (so several `accerl worker --temporal 127.0.0.1:7233` processes, on this machine or
// others, can share the work), and `accerl worker` runs only a worker.
//
// Only one process serves a state directory at a time: it holds an flock on
// <state>/server.lock, which the kernel releases if the process dies, and writes its address to
// <state>/server.addr so that a second `accerl run` on the same directory connects to it instead
// of starting another server.
//
// With ServerConfig.UIPort set (`accerl run` and `accerl server` set 8233 unless --no-ui), the
// server also serves Temporal's Web UI (github.com/temporalio/ui-server) on 127.0.0.1, as
// `temporal server start-dev` does; a taken port turns the UI off, not the server. Every
// namespace has accerl's custom search attributes (workflows.SearchAttributeKeys);
// EnsureSearchAttributes registers them on a server accerl did not start.
package worker
