package worker

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// DefaultUIPort is where `temporal server start-dev` serves its Web UI, and accerl's too.
const DefaultUIPort = 8233

// startUI serves Temporal's Web UI for the frontend at hostPort on 127.0.0.1:port, and
// returns once it accepts connections, with its URL.
//
// The UI server binds its port itself and, when that fails, logs the error as fatal, which
// exits the process; so startUI first checks that the port is free and reports a taken one
// as an error, as the Temporal CLI's start-dev does. Another process could still take the
// port in the instant between that check and the UI's bind. Stopping the UI closes its HTTP
// server; its gRPC connection to the frontend, which the library offers no way to close,
// stays idle until the process ends.
func startUI(port int, hostPort, namespace string) (*uiserver.Server, string, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := checkFree(addr); err != nil {
		return nil, "", err
	}
	ui := uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
		Host:                "127.0.0.1",
		Port:                port,
		TemporalGRPCAddress: hostPort,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		// Plain HTTP on the loopback address: a CSRF cookie marked Secure would never come back.
		CORS:     uiconfig.CORS{CookieInsecure: true},
		HideLogs: true,
	}))
	go func() { _ = ui.Start() }() // returns when Stop closes it
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			ui.Stop()
			return nil, "", fmt.Errorf("web UI on %s did not start: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ui, "http://" + addr, nil
}

// ErrPortInUse is wrapped by the errors of StartServer and Server.UI when a port they were
// given is taken by another process.
var ErrPortInUse = errors.New("is in use by another process")

// checkFree reports whether a listener could bind addr now: nil, or an error that says the
// port is taken. The UI and Temporal servers bind their ports themselves and exit the process
// when that fails, so their callers check first.
func checkFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s %w", addr, ErrPortInUse)
		}
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l.Close()
}
