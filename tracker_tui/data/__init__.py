"""What the app reads, and the small pure models behind the list (marks, pages, views).

Nothing here imports textual, so these models are tested without an app and the cache adapter
can implement `IssueSource` without knowing the UI exists.
"""
