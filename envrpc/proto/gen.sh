#!/bin/sh
# Regenerates envrpc/dmenvrpc from envrpc/proto (run by `go generate ./envrpc`). The generated
# code is committed, so building accerl needs none of this. Tools, at these versions:
#
#   apt-get install protobuf-compiler        # protoc 3.21.12 (Debian 12)
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
#
# protoc-gen-go matches go.mod's google.golang.org/protobuf; the gRPC plugin's output needs
# google.golang.org/grpc >= 1.64, and go.mod has the version the embedded Temporal server pins.
set -eu
cd "$(dirname "$0")/.."
PATH="$(go env GOPATH)/bin:$PATH"
protoc -I proto -I /usr/include \
	--go_out=. --go_opt=module=github.com/accerl/accerl/envrpc \
	--go-grpc_out=. --go-grpc_opt=module=github.com/accerl/accerl/envrpc \
	dm_env_rpc/v1/dm_env_rpc.proto dm_env_rpc/v1/extensions/properties.proto
