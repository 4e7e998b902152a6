"""Kafka Connect's distributed mode: workers in a group, their configs, offsets and statuses in topics."""
