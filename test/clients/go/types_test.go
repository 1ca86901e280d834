package clients

import "github.com/moby/moby/api/types/container"

// The container config's types, as testcontainers-go's WithConfigModifier passes them.
type (
	containerConfig = container.Config
	healthConfig    = container.HealthConfig
)
