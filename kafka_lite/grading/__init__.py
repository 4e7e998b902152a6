"""Lab machinery: discover labs, generate starters from the reference, grade a student's files.

No Kafka twin: modelled on MIT 6.1810's ``make grade`` (gradelib: tests with points, a score
table) and minitorch's per-task pytest markers. The labs themselves are ``labs/labNN_*/``: a
``lab.toml``, a handout and graded tests each.
"""
