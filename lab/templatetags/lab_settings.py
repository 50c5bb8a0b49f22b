"""``{% load lab_settings %}``: a profile's settings as a person reads them
(``lab.settings_display``), in any template."""

from django import template

from lab import settings_display

register = template.Library()


@register.filter
def setting_groups(profile):
    """``profile|setting_groups``: every setting, grouped, with readable labels and values."""
    return settings_display.setting_groups(profile)


@register.filter
def field_label(field_id: str) -> str:
    """``"xs"|field_label``: an index field id as words."""
    return settings_display.field_label(field_id)
