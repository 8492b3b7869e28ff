package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/accerl/accerl/workflows"
)

// searchAttributesSettle is how long EnsureSearchAttributes waits after registering search
// attributes. The server's services read a namespace's search attributes from a namespace
// cache that refreshes every 2 s by default (system.namespaceCacheRefreshInterval); a
// workflow started with them before that would be rejected as using an unknown attribute.
var searchAttributesSettle = 3 * time.Second

// searchAttributeTypes maps each of accerl's custom search attributes to its type.
func searchAttributeTypes() map[string]enumspb.IndexedValueType {
	m := make(map[string]enumspb.IndexedValueType, len(workflows.SearchAttributeKeys))
	for _, k := range workflows.SearchAttributeKeys {
		m[k.GetName()] = k.GetValueType()
	}
	return m
}

// EnsureSearchAttributes registers accerl's custom search attributes
// (workflows.SearchAttributeKeys) in namespace through the operator service op (a client's
// OperatorService()), those that are missing only; when it registered any, it waits for the server's caches to see them. An
// attribute that exists with another type is an error, since workflows that set it would
// fail.
func EnsureSearchAttributes(ctx context.Context, op operatorservice.OperatorServiceClient, namespace string) error {
	have, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range searchAttributeTypes() {
		got, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case got != typ:
			return fmt.Errorf("search attribute %s of namespace %q has type %s, accerl needs %s: remove it (temporal operator search-attribute remove --name %s) and run again",
				name, namespace, got, typ, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) { // another process may have added them meanwhile
		return fmt.Errorf("register search attributes in namespace %q: %w", namespace, err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(searchAttributesSettle):
	}
	return nil
}
