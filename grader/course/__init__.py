"""The course: course.json (manifest.py, its only reader), the limits, the late policy, the course's
own trusted modules."""
