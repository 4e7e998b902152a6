"""The Processor API's runtime: a task, its record queues and partition group, its context, its collector."""
