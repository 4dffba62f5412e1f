from django.urls import path

from school.views import ReportSettingsView

urlpatterns = [path("api/v1/school/report-settings/", ReportSettingsView.as_view())]
