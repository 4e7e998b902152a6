"""The stream partition assignor's parts: the user data it exchanges and the task assignor."""
