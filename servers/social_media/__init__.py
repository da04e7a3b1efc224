"""Social media: a microblogging network of public and private accounts — follows and follow requests,
blocks, short posts with #hashtags and @mentions, comments, likes, reposts and quote posts, a home feed
computed from the accounts one follows, scheduled posts and notifications. Accounts live in the shared
cities.

Time drives publication (``on_time``): a scheduled post goes live when the session clock reaches its
time, and the accounts it mentions are notified then. Posts are editable for 60 minutes after they are
published (scheduled posts until they go out).

Visibility: a private account's posts are seen only by approved followers; when either of two accounts
blocked the other, neither sees or interacts with the other's posts; the home feed shows published posts
and reposts of the accounts one follows (approved) plus one's own, newest first, without blocked
accounts.

Failure rules (each names the argument at fault; a failed call changes nothing):

* unknown account / target_username / requester_username, unknown post_id (a scheduled post is unknown to
  everyone but its author), mentions of accounts that do not exist;
* seeing or interacting with a private account's posts without an approved follow (pending is not
  enough); anything between blocked accounts (you blocked them / they blocked you);
* posts and comments are at most 280 characters (schema), bios at most 160; the same text posted twice
  within 24 hours is a duplicate; schedule_at must be 5 minutes to 30 days ahead;
* editing: only the author; not a deleted post; not a plain repost; published posts only within 60
  minutes; not to the identical text;
* deleting: only the author; not twice;
* liking: not a deleted or not-yet-published post; not twice; unliking needs an existing like;
* commenting: not on a deleted post; not when the author turned comments off;
* reposting: not a deleted post; not a private account's post; a plain repost once per account;
* following: not yourself; not when blocked either way; not twice; not while a request is pending;
  unfollowing needs a follow or pending request; answering a request needs a pending request;
* blocking: not yourself; not twice; unblocking needs an existing block;
* settings: the account password must match (sensitive); something must change; privacy must differ.
"""

from servers.kit import Domain
from servers.social_media import discovery, tools_people, tools_posts
from servers.social_media.state import SocialState, on_time
from servers.social_media.world import generate

domain = Domain(
    "social_media", SocialState, generate,
    description=(
        "A social network of public and private accounts: find people, follow them (private accounts approve "
        "follow requests), block and unblock, read profiles and a home feed built from the accounts you "
        "follow, write, schedule, edit and delete short posts with hashtags and mentions, like, comment on "
        "and repost posts, read notifications and change account settings."
    ),
    modules=(tools_posts, tools_people, discovery),
    on_time=on_time,
)

__all__ = ["SocialState", "discovery", "domain", "generate", "tools_people", "tools_posts"]
