"""kafka_lite."""
