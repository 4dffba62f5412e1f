from django.db import models


class ReportSettings(models.Model):
    show_position = models.BooleanField(default=True)
    show_class_average = models.BooleanField(default=True)
    show_teacher_comments = models.BooleanField(default=True)
    principal_signature = models.TextField(blank=True, default="")
    footer_text = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)
