"""Kafka Connect's REST API: the JSON entities, the resources and the server."""
