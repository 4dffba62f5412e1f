from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import ReportSettings


class ReportSettingsSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReportSettings
        fields = [
            "show_position",
            "show_class_average",
            "show_teacher_comments",
            "principal_signature",
            "footer_text",
            "updated_at",
        ]


class ReportSettingsView(APIView):
    """The school's report settings, created with the defaults on first use."""

    def get(self, request):
        settings, _ = ReportSettings.objects.get_or_create(pk=1)
        return Response(ReportSettingsSerializer(settings).data)
