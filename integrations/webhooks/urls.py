from django.urls import path

from integrations.webhooks import views

urlpatterns = [
    path("webhooks/", views.webhook_list, name="webhooks"),
    path("webhooks/new/", views.webhook_new, name="webhook-new"),
    path("webhooks/<int:endpoint_id>/", views.webhook_detail, name="webhook"),
    path("webhooks/<int:endpoint_id>/test/", views.webhook_test, name="webhook-test"),
    path("webhooks/<int:endpoint_id>/action/", views.webhook_action, name="webhook-action"),
    path("webhooks/<int:endpoint_id>/deliveries/<int:delivery_id>/retry/",
         views.webhook_retry, name="webhook-retry"),
]
