"""Authorization: the ``Authorizer`` interface, ``SimpleAclAuthorizer`` over ZooKeeper, and which ACL
each request needs (Kafka's ``kafka.security.auth``)."""
