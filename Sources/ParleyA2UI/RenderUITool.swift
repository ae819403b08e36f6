import ParleyPrimitives

/// What the built-in tool `parley/render_ui` is to a model: its id, its description (which teaches the
/// catalog briefly) and its input schema, an object because providers and MCP require one. Here, beside
/// the validator, so the description and the rules cannot drift apart; `ParleyTools` lists it.
public enum RenderUITool {
    public static let server = "parley"
    public static let name = "render_ui"
    public static let id = "\(server)/\(name)"
    public static let title = "Draw an interactive answer"

    public static let description = """
        Draws interactive UI (cards, forms, choices, buttons) in the answer with A2UI v0.9 messages, instead \
        of describing it in text. Pass {"messages":[…]}, each message {"version":"v0.9", <one of>}: \
        createSurface {surfaceId, catalogId:"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}; \
        updateComponents {surfaceId, components:[…]} (a flat list, one component with id "root"; children are \
        referenced by id, never inline); updateDataModel {surfaceId, path?, value?}; deleteSurface {surfaceId}. \
        A component is {"id","component":<type>, …properties}. Types: Text{text,variant?}, Image{url} (url only \
        /api/files/{id} of the user's own files), Icon{name}, Row/Column/List{children:[ids]}, Card{child}, \
        Tabs{tabs:[{title,child}]}, Modal{trigger,content}, Divider, Button{child,action:{"event":{"name","context"?}}}, \
        TextField{label,value?}, CheckBox{label,value}, ChoicePicker{options:[{label,value}],value:[…]}, \
        Slider{value,max,min?}, DateTimeInput{value,enableDate?,enableTime?}. A value may bind to the surface's \
        data model with {"path":"/json/pointer"}; a Button's event context with bound values comes back to you \
        as the user's next turn. Links: {"functionCall":{"call":"openUrl","args":{"url":"https://…"}}} (https only). \
        To change a surface drawn earlier, send updateComponents or updateDataModel with its surfaceId. \
        The result lists the surfaces drawn and any message refused, with why.
        """

    public static let inputSchema: JSON = .object([
        "type": .string("object"),
        "properties": .object([
            "messages": .object([
                "type": .string("array"),
                "description": .string("A2UI v0.9 messages, in order."),
                "items": .object(["type": .string("object")]),
            ]),
        ]),
        "required": .array([.string("messages")]),
    ])
}
