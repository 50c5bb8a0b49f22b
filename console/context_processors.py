"""Template context every console page gets."""

from console.namespaces import namespace_hints


def namespaces(request):
    """``namespace_hints``: the existing namespaces for ``_namespaces_datalist.html``; lazy,
    so a page without a namespace field (and every htmx fragment) runs no query for it."""
    return {"namespace_hints": namespace_hints()}
