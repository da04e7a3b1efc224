"""Text material for the social world: post templates (with hashtags), comments, bios."""

from __future__ import annotations

POST_TEMPLATES: tuple[str, ...] = (
    "Morning run along the river done, {n} km before work. #running #{city}",
    "Best flat white in {city_name} is still the little place on the corner. #coffee #{city}",
    "Finally finished the puzzle: 1000 pieces, {n} evenings. #puzzles #weekend",
    "New recipe tonight: lemon garlic pasta. Turned out better than expected! #cooking #homemade",
    "Anyone else think Mondays should start at 10? #mondaymood",
    "Sunset from the rooftop tonight was unreal. #sunset #{city} #photography",
    "Just booked a trip for next month and I cannot wait. #travel #wanderlust",
    "Reading list for the summer is getting long. Recommendations welcome! #books #summerreading",
    "Our team shipped the release today. Proud of everyone involved. #work #teamwork",
    "Rainy day, hot tea, good playlist. Perfect. #cozy",
    "Trying to learn the guitar at {n}. Fingers hurt, heart happy. #music #learning",
    "Farmers market haul: peaches, tomatoes and way too much bread. #farmersmarket #{city}",
    "Hiked {n} miles today and saw exactly one deer. Worth it. #hiking #outdoors",
    "The new exhibit at the museum is a must-see. #art #{city}",
    "Match day! Let's go! #football #matchday",
    "Planted tomatoes and basil on the balcony. Wish me luck. #gardening",
    "Day {n} of learning Spanish. Hoy es un buen dia. #languages #learning",
    "Cleaned out the garage and found my old skateboard. #nostalgia",
    "Concert last night was incredible, still buzzing. #music #livemusic",
    "Working from a cafe today, the wifi is a gamble. #remotework #coffee",
    "Adopted a cat! Her name is Pickle. #cats #adoptdontshop",
    "Marathon training week {n}: legs are tired, spirit is willing. #running #marathon",
    "Tried the new ramen spot downtown. 9/10 broth. #food #{city}",
    "Reminder to drink water and call your mom. #selfcare",
    "Big thanks to @{friend} for the book recommendation, could not put it down. #books",
    "Road trip with @{friend} this weekend, playlist suggestions? #roadtrip #travel",
    "Happy birthday @{friend}! Have the best day. #birthday",
    "Late night coding session, one more bug to go. #coding #developer",
    "Fresh snow in the mountains this morning. #skiing #outdoors",
    "Volunteered at the food bank today, great people there. #community #{city}",
)

SCHEDULED_TEMPLATES: tuple[str, ...] = (
    "Our spring collection drops today! Thanks @{friend} for the photos. #launch #{city}",
    "Live Q&A starting now, bring your questions, @{friend} is joining too. #live #community",
    "Giveaway time! Follow and tag @{friend} to enter. #giveaway",
)

COMMENTS: tuple[str, ...] = (
    "Love this!", "So true.", "Where is this?", "Looks amazing!", "Congrats!!", "Need to try this.",
    "Haha, same here.", "Great shot.", "Count me in next time.", "This made my day.", "Agreed 100%.",
    "Wow, impressive.", "Thanks for sharing!", "Save me a slice.",
)

BIO_PARTS: tuple[str, ...] = (
    "Coffee first.", "Runner.", "Amateur photographer.", "Dog person.", "Cat person.", "Software engineer.",
    "Teacher.", "Plant parent.", "Home cook.", "Bookworm.", "Traveler.", "Designer.", "Nurse.", "Musician.",
    "Opinions are my own.", "Hiking on weekends.", "Learning something new every day.",
)
