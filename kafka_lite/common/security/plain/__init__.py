"""SASL/PLAIN (RFC 4616): the broker's side of the mechanism."""
