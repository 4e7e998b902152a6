"""The broker's security: who may do what (Kafka's ``kafka.security``).

Import from the modules themselves (``kafka_lite.security.auth.simple_acl_authorizer``); the package
re-exports nothing.
"""
