"""The REST API's errors: an exception that carries its HTTP status, and how each error is answered."""
