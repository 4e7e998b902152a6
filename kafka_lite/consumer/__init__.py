"""kafka_lite's consumer (book chapter 4)."""
