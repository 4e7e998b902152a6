"""The REST API's resources: one module per group of paths, as Kafka's JAX-RS resource classes."""
