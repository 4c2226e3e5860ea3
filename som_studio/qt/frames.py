from som_studio.picture.views import *  # noqa: F403  # moved to som_studio.picture; this re-export goes at the merge
