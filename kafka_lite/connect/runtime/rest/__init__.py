"""Kafka Connect's REST API: the JSON entities, the resources and the server.

Only the modules of this package that serve HTTP import FastAPI and uvicorn (``layers.toml``'s
``confined_dependencies``); the herders import its entities and errors alone.
"""
