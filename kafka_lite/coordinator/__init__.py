"""The group coordinator (book chapter 5)."""
