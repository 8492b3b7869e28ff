package envrpc

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/anypb"

	pb "github.com/accerl/accerl/envrpc/dmenvrpc"
	"github.com/accerl/accerl/envrpc/dmenvrpc/properties"
	"github.com/accerl/accerl/testenv"
)

const clientStateTag = "envrpc-client"

// MarshalBinary implements engine.Env: the world's state (property "state"), or, from a
// server without it, only the current observation and frame, which restart the episode on
// resume (see Env).
func (e *Env) MarshalBinary() ([]byte, error) {
	var state []byte
	has := false
	if !e.noState && !e.restart {
		resp, err := e.property(&properties.PropertyRequest{Payload: &properties.PropertyRequest_ReadProperty{
			ReadProperty: &properties.ReadPropertyRequest{Key: PropertyState}}})
		var lost lostError
		switch {
		case errors.As(err, &lost):
			e.reconnect(err) // the episode is gone: resume restarts it
		case err != nil:
			e.noState = true // the server has no such property; do not ask again
		default:
			if state, err = AsBytes(resp.GetReadProperty().GetValue()); err != nil {
				return nil, fmt.Errorf("remote env %s: property %q: %w", e.cfg.Address, PropertyState, err)
			}
			has = true
		}
	}
	w := testenv.NewStateWriter(clientStateTag)
	w.Bool(has)
	w.Bytes(state)
	w.Int(len(e.last))
	for _, v := range e.last {
		w.F64(v)
	}
	w.Bytes(e.frame)
	return w.Data(), nil
}

// UnmarshalBinary implements engine.Env: it writes the world's state back into this
// client's world, or, for a state taken without one, makes the next Step end the episode.
func (e *Env) UnmarshalBinary(data []byte) error {
	r := testenv.NewStateReader(data, clientStateTag)
	has, state := r.Bool(), r.Bytes()
	last := make([]float64, r.Count(1<<24))
	for i := range last {
		last[i] = r.F64()
	}
	frame := r.Bytes()
	if err := r.Done(); err != nil {
		return fmt.Errorf("remote env state: %w", err)
	}
	if has {
		for {
			_, err := e.property(&properties.PropertyRequest{Payload: &properties.PropertyRequest_WriteProperty{
				WriteProperty: &properties.WritePropertyRequest{Key: PropertyState, Value: Bytes(state)}}})
			var lost lostError
			if errors.As(err, &lost) {
				e.reconnect(err)
				continue
			}
			if err != nil {
				return fmt.Errorf("remote env %s world %q: restore state: %w", e.cfg.Address, e.world, err)
			}
			break
		}
	}
	e.restart = !has
	e.last, e.frame = last, frame
	return nil
}

// property sends one request of the properties extension.
func (e *Env) property(req *properties.PropertyRequest) (*properties.PropertyResponse, error) {
	a, err := anypb.New(req)
	if err != nil {
		return nil, err
	}
	resp, err := e.roundTrip(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_Extension{Extension: a}})
	if err != nil {
		return nil, err
	}
	var out properties.PropertyResponse
	if err := resp[0].GetExtension().UnmarshalTo(&out); err != nil {
		return nil, fmt.Errorf("property response: %w", err)
	}
	return &out, nil
}
