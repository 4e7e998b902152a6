"""Lab machinery: discover labs, generate starters from the reference, grade a student's files.

No Kafka twin: modelled on MIT 6.1810's ``make grade`` (gradelib: tests with points, a score
table) and minitorch's per-task pytest markers. See DESIGN §7 and ``labs/README.md``.
"""
