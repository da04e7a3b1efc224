"""Word lists for the team-chat world: channels with their themes and the messages people post there.

Templates use ``{person}`` (a mention of another member), ``{day}``, ``{time}``, ``{num}``,
``{project}`` and ``{ticket}``; the generator fills them from the seeded random source.
"""

from __future__ import annotations

WORKSPACE_SUFFIXES = ("HQ", "Team", "Crew", "Workspace")

TITLES = (
    "Software Engineer", "Senior Software Engineer", "Staff Engineer", "Engineering Manager", "Product Manager",
    "Product Designer", "UX Researcher", "Data Analyst", "Data Scientist", "Marketing Manager",
    "Content Strategist", "Account Executive", "Sales Engineer", "Customer Success Manager", "Support Specialist",
    "Recruiter", "People Partner", "Office Manager", "Finance Analyst", "QA Engineer", "DevOps Engineer",
    "Technical Writer",
)

PROJECTS = ("Atlas", "Beacon", "Comet", "Drift", "Ember", "Falcon", "Harbor", "Juniper", "Kestrel", "Lumen",
            "Mosaic", "Nimbus", "Orbit", "Pioneer", "Quartz", "Summit", "Tidal", "Vertex")

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "tomorrow", "next week", "end of day")
TIMES = ("9:30", "10:00", "11:15", "1:00", "2:30", "3:00", "4:15")

COMMON = (
    "Thanks {person}, that helps a lot!",
    "Can someone take a look at this before {day}?",
    "Quick reminder: standup moves to {time} on {day}.",
    "I'll be out {day}, {person} is covering for me.",
    "Good catch, I'll fix it and ping you.",
    "Is anyone else seeing this, or is it just me?",
    "Agreed, let's go with option B.",
    "Heads up: the doc is updated with the latest numbers.",
)

# theme -> message templates (replies are drawn from REPLIES)
THEMES: dict[str, tuple[str, ...]] = {
    "general": (
        "Welcome to the team, {person}! Say hi everyone :wave:",
        "Reminder: all-hands is {day} at {time}, agenda in the calendar invite.",
        "The office wifi password changed, check the pinned message.",
        "Happy Friday folks! Any weekend plans?",
        "Lunch is catered {day}, please add dietary needs to the sheet.",
        "Who has the spare HDMI adapter from the big conference room?",
    ),
    "announcements": (
        "Company update: we closed Q2 at {num}% of target. Thank you all!",
        "Open enrollment for benefits ends {day}. Please review your selections.",
        "Please welcome {person} who joins us as our new team lead.",
        "The office will be closed {day} for maintenance.",
        "New travel policy is live, details in the handbook.",
    ),
    "engineering": (
        "Deploy of {project} {num}.2 is done, monitoring dashboards look green.",
        "PR for {ticket} is up, would love a review from {person}.",
        "CI is flaky again on the integration suite, looking into it.",
        "We're bumping the Postgres version on staging {day}.",
        "Postmortem for last week's outage is ready for comments.",
        "Who owns the {project} alerting config? Getting paged for noise.",
        "Heads up: main is frozen from {time} for the release cut.",
    ),
    "design": (
        "New mocks for the {project} onboarding flow are in Figma.",
        "{person} can you share the latest icon set?",
        "Design review moved to {day} at {time}.",
        "User testing notes from {day} are in the research folder.",
        "Should empty states use the illustration or just text?",
    ),
    "marketing": (
        "Campaign for {project} launches {day}, copy is final.",
        "Newsletter open rate was {num}% last week, nice bump!",
        "Need a quote from a customer for the case study, any leads {person}?",
        "Blog post draft is ready for review.",
        "Webinar registrations passed {num}0 :tada:",
    ),
    "sales": (
        "Closed the renewal with Northwind, {num}k ARR!",
        "{person} can you join the demo {day} at {time}?",
        "Pipeline review {day}, please update your opportunities.",
        "Prospect is asking about SSO pricing, who can answer?",
        "Lost the Contoso deal to a competitor, notes in the CRM.",
    ),
    "support": (
        "Ticket {ticket} escalated: customer can't reset their password.",
        "Spike in login errors since {time}, engineering is looking.",
        "Macro for refund requests has been updated.",
        "{person} can you take the queue while I'm in training?",
        "Customer satisfaction was {num}% this week.",
    ),
    "product": (
        "Roadmap for {project} next quarter is in the planning doc.",
        "Feedback from the beta: users want bulk export.",
        "Spec for {ticket} is ready, please comment by {day}.",
        "We're cutting the reporting feature from this release.",
        "{person} what did we decide about the pricing page?",
    ),
    "random": (
        "Anyone up for a board game night {day}?",
        "Coffee machine on floor 3 is fixed :coffee:",
        "Look at this cat wearing a tiny hat",
        "Recommendations for a good podcast?",
        "The food trucks are back on {day}!",
    ),
    "help-it": (
        "My laptop won't connect to the VPN since the update.",
        "How do I get access to the shared drive for {project}?",
        "Printer on floor 2 is jammed again.",
        "Reminder: rotate your passwords before {day}.",
    ),
    "incidents": (
        "SEV2 opened for {project} API latency, {person} is incident commander.",
        "Mitigation deployed, error rate back under {num}%.",
        "Incident resolved, postmortem owner is {person}.",
        "Paging the on-call for the payments queue backlog.",
    ),
    "social": (
        "Book club picks for next month are up for vote.",
        "Running club meets {day} at {time} by the river.",
        "Potluck {day}! Sign-up sheet is pinned.",
        "Photos from the team offsite are in the shared album.",
    ),
    "leadership": (
        "Headcount plan draft for H2 is in the folder, comments by {day}.",
        "Let's discuss the {project} budget at {time}.",
        "Promotion packets are due {day}.",
        "Board deck review {day}, please send your slides to {person}.",
    ),
    "offsite": (
        "Venue options for the offsite are in the sheet, vote by {day}.",
        "Flights should be booked by {day}, use the travel portal.",
        "Agenda draft for day one is up, feedback welcome.",
        "Can we do a team dinner on the second night?",
    ),
    "hiring": (
        "Debrief for the {title} candidate is {day} at {time}.",
        "Scorecards for yesterday's onsite are due {day}.",
        "Strong referral from {person} for the open {title} role.",
        "We extended an offer, waiting to hear back.",
    ),
    "project": (
        "{project} milestone {num} is complete :rocket:",
        "Blocked on the API contract for {ticket}, {person} can you help?",
        "Sprint demo {day} at {time}.",
        "Risk: the vendor SDK is late, might slip a week.",
        "Updated the tracker with the remaining tasks.",
    ),
}

REPLIES = (
    "On it!", "Thanks for flagging.", "+1", "Looking now.", "Done, let me know if it works.",
    "Can we chat about this {day}?", "Great news!", "I can help with that.", "Same here.",
    "Fixed in the latest build.", "Adding {person} who knows more.", "Makes sense to me.",
    "Let's sync at {time}.", "Sounds good.", "I'll follow up offline.",
)

DM_LINES = (
    "Hey, do you have a minute to chat?", "Thanks for your help earlier!", "Can you review my doc when you get a chance?",
    "Running 5 minutes late to our 1:1.", "Did you get my email about {project}?", "Lunch {day}?",
    "Sent you the slides.", "Sure, happy to help.", "Let's move our sync to {time}.",
)

STATUSES = (
    ("In a meeting", ":calendar:", 60), ("Commuting", ":bus:", 45), ("Out sick", ":face_with_thermometer:", 1440),
    ("On vacation", ":palm_tree:", 7 * 1440), ("Focus time", ":headphones:", 120), ("Lunch", ":hamburger:", 50),
)

EMOJI = (
    "+1", "-1", "heart", "tada", "eyes", "rocket", "white_check_mark", "raised_hands", "joy", "pray", "fire",
    "100", "clap", "thinking_face", "wave", "coffee", "sparkles", "muscle", "thumbsup", "ok_hand", "smile",
    "laughing", "slightly_smiling_face", "star", "warning", "x", "heavy_check_mark", "bulb", "memo", "calendar",
    "bug", "rotating_light", "sob", "party_popper", "green_heart", "blue_heart", "sunny", "pizza", "cake",
    "partying_face", "handshake", "point_up", "question", "exclamation", "speech_balloon", "hourglass",
    "lock", "link", "bus", "palm_tree", "headphones", "hamburger", "face_with_thermometer",
    # custom workspace emoji
    "shipit", "lgtm", "party-parrot", "this-is-fine", "plus-one",
)
REACTION_POOL = ("+1", "heart", "tada", "eyes", "rocket", "white_check_mark", "raised_hands", "joy", "pray",
                 "fire", "100", "clap", "shipit", "lgtm")

# channel plan: (name, theme, kind, posting, archetype)
CHANNELS: tuple[tuple[str, str, str, str], ...] = (
    ("general", "general", "public", "everyone"),
    ("announcements", "announcements", "public", "admins"),
    ("random", "random", "public", "everyone"),
    ("engineering", "engineering", "public", "everyone"),
    ("design", "design", "public", "everyone"),
    ("marketing", "marketing", "public", "everyone"),
    ("sales", "sales", "public", "everyone"),
    ("customer-support", "support", "public", "everyone"),
    ("product", "product", "public", "everyone"),
    ("help-it", "help-it", "public", "everyone"),
    ("incidents", "incidents", "public", "everyone"),
    ("social-club", "social", "public", "everyone"),
)
TOPICS: dict[str, str] = {
    "general": "Company-wide chatter and questions", "announcements": "Official news from leadership",
    "random": "Non-work banter", "engineering": "Builds, deploys and code reviews",
    "design": "Mocks, research and design reviews", "marketing": "Campaigns and content",
    "sales": "Deals, demos and pipeline", "support": "Customer tickets and escalations",
    "product": "Roadmap and specs", "help-it": "Laptops, access and the VPN",
    "incidents": "Live incidents and postmortems", "social": "Clubs, events and fun",
    "leadership": "Leadership team only", "offsite": "Planning the summer offsite",
    "hiring": "Interview loops and offers", "project": "Project coordination",
}
