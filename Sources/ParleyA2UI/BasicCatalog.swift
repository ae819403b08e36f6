/// A2UI v0.9's basic catalog as Parley accepts it: the layout, display and input components, Modal,
/// and the catalog's functions. Video and AudioPlayer are in the catalog but refused by name (a model
/// cannot point a player at a URL of its choosing). Both catalog ids in circulation are accepted.
public enum BasicCatalog {
    /// The id of the catalog's first v0.9 home, and of its current one.
    public static let ids: Set<String> = [
        "https://a2ui.org/specification/v0_9/basic_catalog.json",
        "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json",
    ]

    /// In the catalog, never accepted by Parley.
    public static let refused: Set<String> = ["Video", "AudioPlayer"]

    /// The catalog's functions (`FunctionCall.call`).
    public static let functions: Set<String> = [
        "required", "regex", "length", "numeric", "email", "formatString", "formatNumber", "formatCurrency",
        "formatDate", "pluralize", "openUrl", "and", "or", "not",
    ]

    /// The catalog's icon names.
    public static let icons: Set<String> = [
        "accountCircle", "add", "arrowBack", "arrowForward", "attachFile", "calendarToday", "call", "camera",
        "check", "close", "delete", "download", "edit", "event", "error", "fastForward", "favorite", "favoriteOff",
        "folder", "help", "home", "info", "locationOn", "lock", "lockOpen", "mail", "menu", "moreVert", "moreHoriz",
        "notificationsOff", "notifications", "pause", "payment", "person", "phone", "photo", "play", "print",
        "refresh", "rewind", "search", "send", "settings", "share", "shoppingCart", "skipNext", "skipPrevious",
        "star", "starHalf", "starOff", "stop", "upload", "visibility", "visibilityOff", "volumeDown", "volumeMute",
        "volumeOff", "volumeUp", "warning",
    ]

    private static let justify = ["center", "end", "spaceAround", "spaceBetween", "spaceEvenly", "start", "stretch"]
    private static let align = ["start", "center", "end", "stretch"]

    /// Every accepted component by name.
    public static let components: [String: ComponentSpec] = {
        let specs: [ComponentSpec] = [
            ComponentSpec("Text", ["text": .dynamicString,
                                   "variant": .text(allowed: ["h1", "h2", "h3", "h4", "h5", "caption", "body"])],
                          required: ["text"]),
            ComponentSpec("Image", ["url": .dynamicString, "description": .dynamicString,
                                    "fit": .text(allowed: ["contain", "cover", "fill", "none", "scaleDown"]),
                                    "variant": .text(allowed: ["icon", "avatar", "smallFeature", "mediumFeature",
                                                               "largeFeature", "header"])],
                          required: ["url"]),
            ComponentSpec("Icon", ["name": .iconName], required: ["name"]),
            ComponentSpec("Row", ["children": .children, "justify": .text(allowed: justify),
                                  "align": .text(allowed: align)], required: ["children"]),
            ComponentSpec("Column", ["children": .children, "justify": .text(allowed: justify),
                                     "align": .text(allowed: align)], required: ["children"]),
            ComponentSpec("List", ["children": .children, "direction": .text(allowed: ["vertical", "horizontal"]),
                                   "align": .text(allowed: align)], required: ["children"]),
            ComponentSpec("Card", ["child": .child], required: ["child"]),
            ComponentSpec("Tabs", ["tabs": .tabs], required: ["tabs"]),
            ComponentSpec("Modal", ["trigger": .child, "content": .child], required: ["trigger", "content"]),
            ComponentSpec("Divider", ["axis": .text(allowed: ["horizontal", "vertical"])], required: []),
            ComponentSpec("Button", ["child": .child, "action": .action,
                                     "variant": .text(allowed: ["default", "primary", "borderless"])],
                          required: ["child", "action"], checkable: true),
            ComponentSpec("TextField", ["label": .dynamicString, "value": .dynamicString,
                                        "variant": .text(allowed: ["longText", "number", "shortText", "obscured"]),
                                        "validationRegexp": .text(allowed: nil)],
                          required: ["label"], checkable: true),
            ComponentSpec("CheckBox", ["label": .dynamicString, "value": .dynamicBoolean],
                          required: ["label", "value"], checkable: true),
            ComponentSpec("ChoicePicker", ["label": .dynamicString, "options": .options, "value": .dynamicStringList,
                                           "variant": .text(allowed: ["multipleSelection", "mutuallyExclusive"]),
                                           "displayStyle": .text(allowed: ["checkbox", "chips"]), "filterable": .boolean],
                          required: ["options", "value"], checkable: true),
            ComponentSpec("Slider", ["label": .dynamicString, "min": .number, "max": .number, "value": .dynamicNumber],
                          required: ["value", "max"], checkable: true),
            ComponentSpec("DateTimeInput", ["value": .dynamicString, "enableDate": .boolean, "enableTime": .boolean,
                                            "min": .dynamicString, "max": .dynamicString, "label": .dynamicString],
                          required: ["value"], checkable: true),
        ]
        return Dictionary(uniqueKeysWithValues: specs.map { ($0.name, $0) })
    }()
}
