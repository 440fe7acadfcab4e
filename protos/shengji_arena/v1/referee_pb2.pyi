from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EventDelivery(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_DELIVERY_UNSPECIFIED: _ClassVar[EventDelivery]
    EVENT_DELIVERY_NOTICES: _ClassVar[EventDelivery]
    EVENT_DELIVERY_WITH_REQUESTS: _ClassVar[EventDelivery]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_PASS: _ClassVar[ActionKind]
    ACTION_KIND_DECLARE: _ClassVar[ActionKind]
    ACTION_KIND_REDEAL: _ClassVar[ActionKind]
    ACTION_KIND_BURY: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]
    ACTION_KIND_UPRISING: _ClassVar[ActionKind]
    ACTION_KIND_HANDOVER: _ClassVar[ActionKind]
    ACTION_KIND_TRANSFER: _ClassVar[ActionKind]
    ACTION_KIND_RETURN: _ClassVar[ActionKind]
    ACTION_KIND_REVEAL_DUN: _ClassVar[ActionKind]
    ACTION_KIND_BURY_JOKERS: _ClassVar[ActionKind]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_DECLARE: _ClassVar[DecisionKind]
    DECISION_KIND_REDEAL: _ClassVar[DecisionKind]
    DECISION_KIND_BURY: _ClassVar[DecisionKind]
    DECISION_KIND_LEAD: _ClassVar[DecisionKind]
    DECISION_KIND_FOLLOW: _ClassVar[DecisionKind]
    DECISION_KIND_UPRISING: _ClassVar[DecisionKind]
    DECISION_KIND_HANDOVER: _ClassVar[DecisionKind]
    DECISION_KIND_TRANSFER: _ClassVar[DecisionKind]
    DECISION_KIND_RETURN: _ClassVar[DecisionKind]
    DECISION_KIND_DUN_REVEAL: _ClassVar[DecisionKind]
    DECISION_KIND_JOKER_BURY: _ClassVar[DecisionKind]
EVENT_DELIVERY_UNSPECIFIED: EventDelivery
EVENT_DELIVERY_NOTICES: EventDelivery
EVENT_DELIVERY_WITH_REQUESTS: EventDelivery
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_PASS: ActionKind
ACTION_KIND_DECLARE: ActionKind
ACTION_KIND_REDEAL: ActionKind
ACTION_KIND_BURY: ActionKind
ACTION_KIND_PLAY: ActionKind
ACTION_KIND_UPRISING: ActionKind
ACTION_KIND_HANDOVER: ActionKind
ACTION_KIND_TRANSFER: ActionKind
ACTION_KIND_RETURN: ActionKind
ACTION_KIND_REVEAL_DUN: ActionKind
ACTION_KIND_BURY_JOKERS: ActionKind
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_DECLARE: DecisionKind
DECISION_KIND_REDEAL: DecisionKind
DECISION_KIND_BURY: DecisionKind
DECISION_KIND_LEAD: DecisionKind
DECISION_KIND_FOLLOW: DecisionKind
DECISION_KIND_UPRISING: DecisionKind
DECISION_KIND_HANDOVER: DecisionKind
DECISION_KIND_TRANSFER: DecisionKind
DECISION_KIND_RETURN: DecisionKind
DECISION_KIND_DUN_REVEAL: DecisionKind
DECISION_KIND_JOKER_BURY: DecisionKind

class BotMessage(_message.Message):
    __slots__ = ("hello", "answer")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    answer: Answer
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., answer: _Optional[_Union[Answer, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "bot_name", "bot_version", "protocol", "event_delivery")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    EVENT_DELIVERY_FIELD_NUMBER: _ClassVar[int]
    token: str
    bot_name: str
    bot_version: str
    protocol: str
    event_delivery: EventDelivery
    def __init__(self, token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol: _Optional[str] = ..., event_delivery: _Optional[_Union[EventDelivery, str]] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("request_id", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: Action
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("kind", "cards", "suit", "take")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    TAKE_FIELD_NUMBER: _ClassVar[int]
    kind: ActionKind
    cards: _containers.RepeatedScalarFieldContainer[str]
    suit: str
    take: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, kind: _Optional[_Union[ActionKind, str]] = ..., cards: _Optional[_Iterable[str]] = ..., suit: _Optional[str] = ..., take: _Optional[_Iterable[str]] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "request", "notice", "rejection", "match_end")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    request: DecisionRequest
    notice: Notice
    rejection: Rejection
    match_end: MatchEnd
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ..., rejection: _Optional[_Union[Rejection, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "variant", "options_json", "time_control", "protocol")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    variant: str
    options_json: str
    time_control: TimeControl
    protocol: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., variant: _Optional[str] = ..., options_json: _Optional[str] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., protocol: _Optional[str] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_decision_ms", "bank_ms", "max_strikes", "reconnect_window_ms", "max_reconnects")
    PER_DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_RECONNECTS_FIELD_NUMBER: _ClassVar[int]
    per_decision_ms: int
    bank_ms: int
    max_strikes: int
    reconnect_window_ms: int
    max_reconnects: int
    def __init__(self, per_decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., max_strikes: _Optional[int] = ..., reconnect_window_ms: _Optional[int] = ..., max_reconnects: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "kind", "observation", "hint", "time_left_ms", "bank_left_ms", "events")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    HINT_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    kind: DecisionKind
    observation: Observation
    hint: LegalHint
    time_left_ms: int
    bank_left_ms: int
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, request_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., hint: _Optional[_Union[LegalHint, _Mapping]] = ..., time_left_ms: _Optional[int] = ..., bank_left_ms: _Optional[int] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class LegalHint(_message.Message):
    __slots__ = ("complete", "actions", "note")
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    complete: bool
    actions: _containers.RepeatedCompositeFieldContainer[Action]
    note: str
    def __init__(self, complete: _Optional[bool] = ..., actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., note: _Optional[str] = ...) -> None: ...

class SeatCards(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "variant", "deal", "phase", "levels", "dealer", "level", "trump", "hand", "hand_sizes", "first_receiver", "cards_dealt", "declarations", "public_kitty", "drawn_kitty_card", "my_kitty", "kitty_holder", "redeals", "trick_leader", "trick", "tricks_played", "attacker_points", "penalties", "hard_duns", "dry_pot", "match_points")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    FIRST_RECEIVER_FIELD_NUMBER: _ClassVar[int]
    CARDS_DEALT_FIELD_NUMBER: _ClassVar[int]
    DECLARATIONS_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KITTY_FIELD_NUMBER: _ClassVar[int]
    DRAWN_KITTY_CARD_FIELD_NUMBER: _ClassVar[int]
    MY_KITTY_FIELD_NUMBER: _ClassVar[int]
    KITTY_HOLDER_FIELD_NUMBER: _ClassVar[int]
    REDEALS_FIELD_NUMBER: _ClassVar[int]
    TRICK_LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    ATTACKER_POINTS_FIELD_NUMBER: _ClassVar[int]
    PENALTIES_FIELD_NUMBER: _ClassVar[int]
    HARD_DUNS_FIELD_NUMBER: _ClassVar[int]
    DRY_POT_FIELD_NUMBER: _ClassVar[int]
    MATCH_POINTS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    variant: str
    deal: int
    phase: str
    levels: _containers.RepeatedScalarFieldContainer[str]
    dealer: int
    level: str
    trump: str
    hand: _containers.RepeatedScalarFieldContainer[str]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    first_receiver: int
    cards_dealt: int
    declarations: _containers.RepeatedCompositeFieldContainer[SeatCards]
    public_kitty: _containers.RepeatedScalarFieldContainer[str]
    drawn_kitty_card: str
    my_kitty: _containers.RepeatedScalarFieldContainer[str]
    kitty_holder: int
    redeals: int
    trick_leader: int
    trick: _containers.RepeatedCompositeFieldContainer[SeatCards]
    tricks_played: int
    attacker_points: int
    penalties: _containers.RepeatedScalarFieldContainer[int]
    hard_duns: _containers.RepeatedScalarFieldContainer[int]
    dry_pot: bool
    match_points: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., variant: _Optional[str] = ..., deal: _Optional[int] = ..., phase: _Optional[str] = ..., levels: _Optional[_Iterable[str]] = ..., dealer: _Optional[int] = ..., level: _Optional[str] = ..., trump: _Optional[str] = ..., hand: _Optional[_Iterable[str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., first_receiver: _Optional[int] = ..., cards_dealt: _Optional[int] = ..., declarations: _Optional[_Iterable[_Union[SeatCards, _Mapping]]] = ..., public_kitty: _Optional[_Iterable[str]] = ..., drawn_kitty_card: _Optional[str] = ..., my_kitty: _Optional[_Iterable[str]] = ..., kitty_holder: _Optional[int] = ..., redeals: _Optional[int] = ..., trick_leader: _Optional[int] = ..., trick: _Optional[_Iterable[_Union[SeatCards, _Mapping]]] = ..., tricks_played: _Optional[int] = ..., attacker_points: _Optional[int] = ..., penalties: _Optional[_Iterable[int]] = ..., hard_duns: _Optional[_Iterable[int]] = ..., dry_pot: _Optional[bool] = ..., match_points: _Optional[_Iterable[int]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("kind", "seat", "cards", "json")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    kind: str
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    json: str
    def __init__(self, kind: _Optional[str] = ..., seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., json: _Optional[str] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("reason", "events")
    REASON_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, reason: _Optional[str] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class Rejection(_message.Message):
    __slots__ = ("request_id", "reason", "strikes", "default_action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    reason: str
    strikes: int
    default_action: Action
    def __init__(self, request_id: _Optional[int] = ..., reason: _Optional[str] = ..., strikes: _Optional[int] = ..., default_action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("reason", "result_json")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    result_json: str
    def __init__(self, reason: _Optional[str] = ..., result_json: _Optional[str] = ...) -> None: ...
